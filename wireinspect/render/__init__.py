"""Front ends over the one tree: rich trees, JSON Lines, annotated hex dumps, summaries."""
