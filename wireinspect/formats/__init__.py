"""Sans-I/O decoders, one module (or package) per format: bytes in, nodes out."""
