"""The capture filters: which conversations and units a capture's dump shows."""

from __future__ import annotations



class Filters:
    """``--connection`` (any protocol), ``--api`` and ``--correlation-id`` (asked of the unit's
    protocol: ``select(unit, api, correlation_ids) -> bool``; units of a protocol without it are
    left out while those filters are active) from the Options; ``protocols``: the capture's
    :class:`~.protocols.Protocols`."""

    def __init__(self, opts, protocols):
        self.protocols = protocols
        self.api = {str(a).lower() for a in opts.apis} if opts else set()
        self.connection = [str(c) for c in opts.connections] if opts else []
        self.corr = {int(c) for c in opts.correlation_ids} if opts else set()
        self.active = bool(self.api or self.connection or self.corr)

    def conversation_ok(self, conv) -> bool:
        if not self.connection:
            return True
        c = conv.connection_json()
        for want in self.connection:
            if want == str(c["index"]) or want in (c["client"], c["server"]):
                return True
            if want.isdigit() and any(e and e.rsplit(":", 1)[-1] == want for e in (c["client"], c["server"])):
                return True
            if f"{c['client']}-{c['server']}" == want or f"{c['server']}-{c['client']}" == want:
                return True
        return False

    def unit_ok(self, u) -> bool:
        if self.connection:
            conv = u.conversation
            if conv is None or not self.conversation_ok(conv):
                return False
        if self.api or self.corr:
            if u.type != "frame":
                return False
            proto = self.protocols.of_unit(u)
            return bool(proto is not None and proto.select is not None and proto.select(u, self.api, self.corr))
        return True
