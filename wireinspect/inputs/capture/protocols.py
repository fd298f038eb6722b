"""The stream protocols a capture's conversations are decoded with, looked up by id. This package knows
no particular protocol: its callers give them (:mod:`wireinspect.captures` declares the capture formats
over the catalog's ``STREAM_PROTOCOLS``; the interface a protocol implements is in
:mod:`wireinspect.streams`)."""

from __future__ import annotations


class Protocols:
    """The stream protocols one capture is decoded with: ``all`` (in the order a tie between them is
    broken) and ``by_id``."""

    def __init__(self, protocols):
        self.all = tuple(protocols)
        self.by_id = {p.id: p for p in self.all}

    def of_unit(self, u):
        """The protocol a captured unit was decoded with (its conversation's, else its own
        ``protocol``); None when it is none of these."""
        conv = u.conversation
        return self.by_id.get((conv.protocol if conv is not None else None) or u.protocol)
