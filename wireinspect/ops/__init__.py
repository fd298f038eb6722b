"""What the commands do, as importable functions (the CLI only parses options and prints)."""
