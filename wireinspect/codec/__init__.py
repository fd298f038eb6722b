"""Byte-level building blocks shared by every format: varints, CRCs, bounded decompression, times,
and how bytes values are written as JSON text and read back (bytesfmt: base64, hex, text)."""
