"""Where bytes come from: files, directories, stdin, hex dumps (and captures, see capture.py)."""
