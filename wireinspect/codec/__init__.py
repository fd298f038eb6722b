"""Byte-level building blocks shared by every format: varints, CRCs, bounded decompression."""
