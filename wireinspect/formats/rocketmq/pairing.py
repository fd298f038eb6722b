"""Pairing RocketMQ remoting responses with their requests by ``opaque`` (the request id a response
echoes; ``RemotingCommand.opaque``, ``NettyRemotingAbstract.processResponseCommand``), per
connection; once paired, a response's body is decoded with its request's code."""

from __future__ import annotations

from wireinspect.codec.compression import DEFAULT_LIMIT
from wireinspect.formats.rocketmq.bodies import decode_frame_body


class Conversation:
    """Pairs responses with requests by ``opaque``, per connection. A request sent from one side is
    answered from the other; oneway requests get no response. ``observe(frame, direction)``
    records requests and, for responses, sets ``request_code``/``request_position`` and decodes
    the body (a PULL_MESSAGE response body is commit-log records)."""

    def __init__(self, limit: int = DEFAULT_LIMIT):
        self.pending = {}
        self.limit = limit

    def observe(self, f, direction: str) -> None:
        if not f.header:
            return
        if not f.is_response:
            if not f.is_oneway and f.opaque is not None:
                self.pending.setdefault(f.opaque, []).append((direction, f))
            decode_frame_body(f, None, self.limit)
            return
        req = None
        waiting = self.pending.get(f.opaque, ())
        for i, (d, cand) in enumerate(waiting):
            if d != direction:
                req = waiting.pop(i)[1]
                break
        if req is not None:
            f.request_position = req.position
            req.response_position = f.position
            decode_frame_body(f, req.code, self.limit)
        else:
            decode_frame_body(f, None, self.limit)
