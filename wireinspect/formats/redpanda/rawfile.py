"""The raw keys of a unit that stands for a whole file (``.base_index``, ``.compaction_index``):
``dump --json --raw`` adds ``rawBytes`` + ``rawBytesDigest`` (the file as stored, and a digest of the
JSON it stands for, as Kafka batches' :func:`~wireinspect.formats.kafka.log_encode.whole_digest`) only
when encoding the unit's own JSON with ``--keep-crc`` does not give the file back; ``encode`` writes
``rawBytes`` while the digest matches (the object was not edited)."""

from __future__ import annotations

from wireinspect.codec.bytesfmt import mode_of
from wireinspect.errors import EncodeError
from wireinspect.layout import EncodeContext


def raw_keys(d: dict, stored: bytes, encode, enc) -> dict:
    """``{}`` when ``encode(d, keep_crc)`` gives ``stored`` back, else ``rawBytes``/``rawBytesDigest``."""
    from wireinspect.formats.kafka.log_encode import whole_digest

    try:
        same = encode(d, EncodeContext(keep_crc=True, bytes_mode=mode_of(enc))) == stored
    except EncodeError:
        same = False
    return {} if same else {"rawBytes": enc(stored), "rawBytesDigest": whole_digest(d)}


def stored_bytes(obj, ctx) -> bytes | None:
    """The ``rawBytes`` of an unedited object (None when absent or edited); EncodeError when ``obj``
    is not an object."""
    from wireinspect.formats.kafka.log_encode import whole_digest

    if not isinstance(obj, dict):
        raise EncodeError(f".: expected an object, got {type(obj).__name__}")
    raw = obj.get("rawBytes")
    if raw is not None and obj.get("rawBytesDigest") == whole_digest(obj):
        return ctx.blob(raw, ".rawBytes")
    return None
