"""pcap and pcapng readers, and the link/IP/TCP header decoding of their packets.

Layouts: pcap (draft-ietf-opsawg-pcap: 24-byte file header, 16-byte record headers; magic
``a1b2c3d4`` microseconds, ``a1b23c4d`` nanoseconds, either byte order) and pcapng
(draft-ietf-opsawg-pcapng: blocks ``type, total length, body, total length``; Section Header,
Interface Description with ``if_tsresol``, Enhanced, Simple and obsolete Packet blocks). Link
types (tcpdump.org link-layer header types): 0 NULL and 108 LOOP (BSD loopback), 1 Ethernet (with
802.1Q/802.1ad tags), 113 Linux SLL, 276 Linux SLL2, 101/12/14 raw IP, 228 IPv4, 229 IPv6. IPv4
(RFC 791) and IPv6 (RFC 8200, skipping extension headers), then TCP (RFC 9293).

Damage is reported, never skipped silently: a record or block that runs past the end of the file
(``truncated_record``/``truncated_block``), a packet captured shorter than it was on the wire
(``snaplen_short``), a record or block whose lengths are impossible (``corrupt_record``/
``corrupt_block``: the reader then resynchronises on the next plausible one, reporting the bytes
skipped), unknown block types (``skipped_block``), unsupported link types, IP fragments.
Problem positions here are byte positions in the capture file.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from wireinspect.inputs.source import Source, Window
from wireinspect.model import Problem

PCAP_MAGICS = {b"\xd4\xc3\xb2\xa1": ("<", 1e-6), b"\xa1\xb2\xc3\xd4": (">", 1e-6),
               b"\x4d\x3c\xb2\xa1": ("<", 1e-9), b"\xa1\xb2\x3c\x4d": (">", 1e-9)}
PCAPNG_SHB = b"\x0a\x0d\x0d\x0a"
MAX_PACKET = 1 << 18  # 256 KiB: larger captured lengths are corrupt (libpcap's MAXIMUM_SNAPLEN)
BENIGN_BLOCKS = {4, 5, 9, 0xA, 0xBAD, 0x40000BAD, 0x80000001}  # NRB, ISB, journal, DSB, custom, Darwin


class Packet(NamedTuple):
    """One captured packet: ``index`` (0-based), ``position`` (file position of its record/block),
    ``timestamp`` (seconds), ``linktype``, ``data`` (captured bytes), ``wire_length`` (bytes on the
    wire), ``problems``, ``data_position`` (file position of ``data[0]``)."""

    index: int
    position: int
    timestamp: float
    linktype: int
    data: bytes
    wire_length: int
    problems: list
    data_position: int = -1  # capture file position of data[0]


def sniff_capture(head: bytes) -> str | None:
    """``"pcap"``, ``"pcapng"`` or None from the first bytes."""
    if head[:4] in PCAP_MAGICS:
        return "pcap"
    if head[:4] == PCAPNG_SHB and len(head) >= 12 and head[8:12] in (b"\x1a\x2b\x3c\x4d", b"\x4d\x3c\x2b\x1a"):
        return "pcapng"
    return None


def _live(source: Source):
    """``(ensure, release)`` of a source whose bytes arrive while it is read
    (:class:`~wireinspect.inputs.live.LiveSource`: wait for ``end`` bytes; forget the bytes before a
    position), else no-ops: a file's bytes are all there."""
    ensure = getattr(source, "ensure", None)
    if ensure is None:
        return _all_there, _keep
    return ensure, source.release


def _all_there(end: int) -> bool:
    return True


def _keep(position: int) -> None:
    pass


RESYNC_LOOKAHEAD = 4 << 20  # a live stream: bytes awaited before resynchronising after a corrupt record


def read_packets(source: Source, problems: list):
    """Yield :class:`Packet` objects of a pcap or pcapng file; file-level problems go to ``problems``
    (and packet-level ones to each packet). A live source (a capture arriving on a pipe) is read
    as its bytes come: each packet is yielded as soon as its record is complete."""
    _live(source)[0](12)
    head = source.read(0, 12)
    kind = sniff_capture(head)
    if kind == "pcap":
        yield from _pcap(source, problems)
    elif kind == "pcapng":
        yield from _pcapng(source, problems)
    else:
        problems.append(Problem("not_a_capture", 0, "no pcap or pcapng magic number"))


# -- pcap ----------------------------------------------------------------------------------------
def _pcap(source: Source, problems: list):
    win = Window(source)
    ensure, release = _live(source)
    ensure(24)
    size = source.size
    buf, i = win.get(0, 24)
    if size < 24:
        problems.append(Problem("truncated_record", 0, f"pcap file header needs 24 bytes, the file has {size}",
                                expected=24, actual=size))
        return
    endian, unit = PCAP_MAGICS[bytes(buf[i:i + 4])]
    _, _, _, _, snaplen, network = struct.unpack_from(endian + "HHiIII", buf, i + 4)
    linktype = network & 0x0FFFFFFF
    rec = struct.Struct(endian + "IIII")
    limit = max(snaplen, MAX_PACKET) if snaplen < (1 << 30) else MAX_PACKET
    pos = 24
    index = 0
    last_ts = None
    while True:
        ensure(pos + 16)
        size = source.size
        if pos >= size:
            break
        if size - pos < 16:
            problems.append(Problem("truncated_record", pos, f"{size - pos} bytes at the end are too few for a pcap "
                                    "record header (16 bytes): the capture was cut off", expected=16,
                                    actual=size - pos))
            return
        buf, i = win.get(pos, 16)
        sec, frac, incl, orig = rec.unpack_from(buf, i)
        if incl > limit or (orig and incl > orig and orig >= 14) or (unit == 1e-6 and frac >= 1_000_000):
            more = not ensure(pos + RESYNC_LOOKAHEAD)  # a live stream: what follows, or its end
            size = source.size
            nxt = _pcap_resync(win, pos + 1, rec, limit, last_ts, unit)
            end = size if nxt is None else nxt
            rest = "" if nxt is not None or more else f"; no plausible record in the {size - pos} bytes after it: " \
                "the rest of the stream is not read"
            problems.append(Problem("corrupt_record", pos, f"pcap record header at {pos} is impossible (captured "
                                    f"length {incl}, wire length {orig}); {end - pos} bytes skipped{rest}",
                                    actual=incl))
            if nxt is None:
                return
            pos = nxt
            continue
        ensure(pos + 16 + incl)
        size = source.size
        if pos + 16 + incl > size:
            problems.append(Problem("truncated_record", pos, f"pcap record of {incl} bytes runs past the end of the "
                                    f"file ({size - pos - 16} bytes left): the capture was cut off",
                                    expected=incl, actual=size - pos - 16))
            return
        buf, i = win.get(pos + 16, incl)
        data = bytes(buf[i:i + incl])
        pprobs = []
        if orig > incl:
            pprobs.append(Problem("snaplen_short", pos, f"frame {index + 1} was captured with {incl} of its {orig} "
                                  "bytes (snaplen)", expected=orig, actual=incl))
        ts = sec + frac * unit
        last_ts = sec
        index += 1
        pos += 16 + incl
        release(pos)
        yield Packet(index - 1, pos - 16 - incl, ts, linktype, data, orig, pprobs, pos - incl)


def _pcap_resync(win: Window, start: int, rec, limit, last_ts, unit) -> int | None:
    """Next position whose record header is plausible and is followed by another plausible header
    (or the end of the file)."""
    size = win.source.size

    def ok(p):
        if size - p < 16:
            return False
        buf, i = win.get(p, 16)
        sec, frac, incl, orig = rec.unpack_from(buf, i)
        if incl > limit or incl == 0 or incl > orig or (unit == 1e-6 and frac >= 1_000_000):
            return False
        if last_ts is not None and abs(sec - last_ts) > 86400 * 7:
            return False
        return p + 16 + incl <= size

    p = start
    while p + 16 <= size:
        if ok(p):
            buf, i = win.get(p, 16)
            nxt = p + 16 + rec.unpack_from(buf, i)[2]
            if nxt == size or ok(nxt):
                return p
        p += 1
    return None


# -- pcapng --------------------------------------------------------------------------------------
def _pcapng(source: Source, problems: list):
    win = Window(source)
    ensure, release = _live(source)
    pos = 0
    endian = "<"
    ifaces: list = []  # (linktype, snaplen, ts unit)
    index = 0
    while True:
        ensure(pos + 12)
        size = source.size
        if pos >= size:
            break
        if size - pos < 12:
            problems.append(Problem("truncated_block", pos, f"{size - pos} bytes at the end are too few for a pcapng "
                                    "block (12 bytes): the capture was cut off", expected=12, actual=size - pos))
            return
        buf, i = win.get(pos, 12)
        if bytes(buf[i:i + 4]) == PCAPNG_SHB:
            bom = bytes(buf[i + 8:i + 12])
            endian = "<" if bom == b"\x4d\x3c\x2b\x1a" else ">" if bom == b"\x1a\x2b\x3c\x4d" else endian
        btype, blen = struct.unpack_from(endian + "II", buf, i)
        bad = blen < 12 or blen % 4 or blen > (1 << 28)
        if not bad:
            ensure(pos + blen)
            size = source.size
        if not bad and pos + blen > size:
            problems.append(Problem("truncated_block", pos, f"pcapng block of {blen} bytes runs past the end of the "
                                    f"file ({size - pos} bytes left): the capture was cut off", expected=blen,
                                    actual=size - pos))
            return
        if not bad:
            buf, i = win.get(pos, blen)
            (trail,) = struct.unpack_from(endian + "I", buf, i + blen - 4)
            bad = trail != blen
        if bad:
            more = not ensure(pos + RESYNC_LOOKAHEAD)  # a live stream: what follows, or its end
            size = source.size
            nxt = _pcapng_resync(win, pos + 4, endian)
            end = size if nxt is None else nxt
            rest = "" if nxt is not None or more else f"; no plausible block in the {size - pos} bytes after it: " \
                "the rest of the stream is not read"
            problems.append(Problem("corrupt_block", pos, f"pcapng block at {pos} has impossible lengths (type "
                                    f"0x{btype:x}, length {blen}); {end - pos} bytes skipped{rest}", actual=blen))
            if nxt is None:
                return
            pos = nxt
            continue
        body = bytes(buf[i + 8:i + blen - 4])
        if btype == 0x0A0D0D0A:
            ifaces = []
        elif btype == 1:
            if len(body) < 8:
                problems.append(Problem("corrupt_block", pos, "interface description block shorter than 8 bytes"))
            else:
                lt, _, snap = struct.unpack_from(endian + "HHI", body, 0)
                ifaces.append((lt, snap, _tsresol(body[8:], endian)))
        elif btype in (6, 3, 2):
            pkt = _pcapng_packet(btype, body, endian, ifaces, pos, index, problems)
            if pkt is not None:
                yield pkt
                index += 1
        elif btype not in BENIGN_BLOCKS:
            problems.append(Problem("skipped_block", pos, f"pcapng block type 0x{btype:08x} ({blen} bytes) is not "
                                    "one wireinspect reads; skipped", actual=btype))
        pos += blen
        release(pos)


def _tsresol(opts: bytes, endian: str) -> float:
    p = 0
    while p + 4 <= len(opts):
        code, n = struct.unpack_from(endian + "HH", opts, p)
        if code == 0:
            break
        if code == 9 and n >= 1 and p + 5 <= len(opts):
            v = opts[p + 4]
            return 2.0 ** -(v & 0x7F) if v & 0x80 else 10.0 ** -v
        p += 4 + ((n + 3) & ~3)
    return 1e-6


def _pcapng_packet(btype, body, endian, ifaces, pos, index, problems):
    if btype == 6:
        if len(body) < 20:
            problems.append(Problem("corrupt_block", pos, "enhanced packet block shorter than 20 bytes"))
            return None
        iface, hi, lo, cap, orig = struct.unpack_from(endian + "IIIII", body, 0)
        off = 20
    elif btype == 2:
        if len(body) < 20:
            problems.append(Problem("corrupt_block", pos, "packet block shorter than 20 bytes"))
            return None
        iface, _, hi, lo, cap, orig = struct.unpack_from(endian + "HHIIII", body, 0)
        off = 20
    else:
        if len(body) < 4 or not ifaces:
            problems.append(Problem("corrupt_block", pos, "simple packet block without an interface"))
            return None
        (orig,) = struct.unpack_from(endian + "I", body, 0)
        iface, hi, lo = 0, 0, 0
        cap = min(orig, len(body) - 4, ifaces[0][1] or orig)
        off = 4
    if iface >= len(ifaces):
        problems.append(Problem("corrupt_block", pos, f"packet block names interface {iface}, only {len(ifaces)} "
                                "described", actual=iface))
        return None
    if off + cap > len(body):
        problems.append(Problem("corrupt_block", pos, f"packet block captured length {cap} exceeds the block",
                                actual=cap))
        return None
    lt, _, unit = ifaces[iface]
    pprobs = []
    if orig > cap:
        pprobs.append(Problem("snaplen_short", pos, f"frame {index + 1} was captured with {cap} of its {orig} bytes "
                              "(snaplen)", expected=orig, actual=cap))
    return Packet(index, pos, ((hi << 32) | lo) * unit, lt, body[off:off + cap], orig, pprobs, pos + 8 + off)


def _pcapng_resync(win: Window, start: int, endian: str) -> int | None:
    size = win.source.size
    known = {1, 2, 3, 4, 5, 6, 0xA, 0x0A0D0D0A, 0xBAD, 0x40000BAD}
    p = (start + 3) & ~3
    while p + 12 <= size:
        buf, i = win.get(p, 12)
        btype, blen = struct.unpack_from(endian + "II", buf, i)
        if btype in known and blen >= 12 and not blen % 4 and p + blen <= size:
            buf, i = win.get(p + blen - 4, 4)
            if struct.unpack_from(endian + "I", buf, i)[0] == blen:
                return p
        p += 4
    return None


# -- link, IP, TCP -------------------------------------------------------------------------------
class Segment(NamedTuple):
    """A TCP segment: endpoints as text, ``seq``, ``ack``, ``flags``, ``payload`` (captured bytes) and
    ``missing`` (payload bytes the IP length announces beyond what was captured), ``payload_offset``
    (where the payload starts in the packet's captured bytes)."""

    src: str
    sport: int
    dst: str
    dport: int
    seq: int
    ack: int
    flags: int
    payload: bytes
    missing: int
    payload_offset: int = 0  # position of payload[0] in the packet's data


_ETH_IP = {0x0800: 4, 0x86DD: 6}
_AF_INET6 = {24, 28, 30, 10}


def ip_offset(linktype: int, data: bytes):
    """``(offset of the IP header, ip version or 0)`` for a link type, or ``(None, reason)``."""
    n = len(data)
    if linktype == 1:
        off, etype = 12, None
        while off + 2 <= n:
            etype = (data[off] << 8) | data[off + 1]
            if etype in (0x8100, 0x88A8, 0x9100):
                off += 4
                continue
            break
        return (off + 2, _ETH_IP.get(etype, -1)) if etype is not None else (None, "short ethernet header")
    if linktype == 113:
        if n < 16:
            return None, "short SLL header"
        return 16, _ETH_IP.get((data[14] << 8) | data[15], -1)
    if linktype == 276:
        if n < 20:
            return None, "short SLL2 header"
        return 20, _ETH_IP.get((data[0] << 8) | data[1], -1)
    if linktype in (0, 108):
        if n < 4:
            return None, "short loopback header"
        le = int.from_bytes(data[:4], "little")
        be = int.from_bytes(data[:4], "big")
        af = be if linktype == 108 else (le if le < 256 else be)
        return 4, 4 if af == 2 else 6 if af in _AF_INET6 else -1
    if linktype in (101, 12, 14, 228, 229):
        return 0, 0
    return None, f"unsupported link type {linktype}"


def parse_tcp(linktype: int, data: bytes):
    """``(Segment or None, problem text or None)``: None without a problem for non-TCP packets."""
    import socket  # here, not with the module: sniffing a file for the pcap format needs none of it

    off, ver = ip_offset(linktype, data)
    if off is None:
        return None, ver
    n = len(data)
    if off >= n:
        return None, "packet ends before the IP header"
    if ver == 0:
        ver = data[off] >> 4
    if ver == 4:
        if off + 20 > n:
            return None, "short IPv4 header"
        ihl = (data[off] & 0x0F) * 4
        total = (data[off + 2] << 8) | data[off + 3]
        frag = ((data[off + 6] << 8) | data[off + 7])
        proto = data[off + 9]
        if proto != 6:
            return None, None
        if frag & 0x3FFF:
            return None, "IPv4 fragment (fragments are not reassembled)"
        src = socket.inet_ntop(socket.AF_INET, data[off + 12:off + 16])
        dst = socket.inet_ntop(socket.AF_INET, data[off + 16:off + 20])
        tcp = off + ihl
        ip_end = off + total if total else n
    elif ver == 6:
        if off + 40 > n:
            return None, "short IPv6 header"
        plen = (data[off + 4] << 8) | data[off + 5]
        nh = data[off + 6]
        src = "[" + socket.inet_ntop(socket.AF_INET6, data[off + 8:off + 24]) + "]"
        dst = "[" + socket.inet_ntop(socket.AF_INET6, data[off + 24:off + 40]) + "]"
        tcp = off + 40
        ip_end = tcp + plen if plen else n
        while nh in (0, 43, 60, 44):
            if tcp + 8 > n:
                return None, "short IPv6 extension header"
            if nh == 44:
                fo = ((data[tcp + 2] << 8) | data[tcp + 3])
                if fo & 0xFFF9:
                    return None, "IPv6 fragment (fragments are not reassembled)"
                nh, tcp = data[tcp], tcp + 8
            else:
                nh, tcp = data[tcp], tcp + (data[tcp + 1] + 1) * 8
        if nh != 6:
            return None, None
    else:
        return None, None if ver == -1 else f"IP version {ver}"
    if tcp + 20 > n:
        return None, "packet ends inside the TCP header"
    sport, dport, seq, ack, hl, flags = struct.unpack_from(">HHIIBB", data, tcp)
    start = tcp + (hl >> 4) * 4
    end = min(ip_end, n)
    payload = data[start:end] if start < end else b""
    missing = max(ip_end - max(n, start), 0)
    return Segment(src, sport, dst, dport, seq, ack, flags, payload, missing, start), None
