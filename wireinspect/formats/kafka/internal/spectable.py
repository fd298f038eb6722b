"""Which record definition decodes which record of which kind (all read from the vendored specs:
no field is listed here).

* Coordinator kinds (``offsets``, ``transactions``, ``share-state``): the ``coordinator-key`` and
  ``coordinator-value`` specs by ``apiKey`` (the record type) of the coordinator's folder
  (``group-coordinator/`` + the removed types 9 and 18 of ``removed/``; ``transaction-coordinator/``;
  ``share-coordinator/``), as Kafka's ``GroupCoordinatorRecordSerde`` /
  ``TransactionCoordinatorRecordSerde`` / ``ShareCoordinatorRecordSerde`` pick them.
* Metadata kinds: the ``metadata`` specs by ``apiKey`` (``metadata/`` + removed 6 and 16 for
  ``metadata``, as ``MetadataRecordSerde``; ``storage/`` for ``remote-log-metadata``, as
  ``RemoteLogMetadataSerde``).
* KRaft control records: the type of the control key (``ControlRecordType``) -> the top-level
  ``data`` spec, read at version 0 (``ControlRecordUtils.*_CURRENT_VERSION``).
* Alternate schemas (:data:`ALTERNATES`): a released Kafka that wrote a value with a layout the trunk
  spec of the same name and version no longer has (the early-access share-group records of Kafka 4.0:
  ``internal/kafka-4.0/``). Each is tied to the record type of the trunk spec of its name, and is
  read only when the trunk reading fails or leaves bytes (``decode.decode_coordinator_value``).
"""

from __future__ import annotations

from functools import lru_cache

from wireinspect.formats.kafka.internal.kinds import FRAMING, KINDS
from wireinspect.formats.kafka.protocol.specs_loader import Spec, specs

FOLDERS = {"offsets": ("group-coordinator", "removed"), "transactions": ("transaction-coordinator",),
           "share-state": ("share-coordinator",), "metadata": ("metadata", "removed"),
           "remote-log-metadata": ("storage",)}

# ControlRecordType -> the spec of its value (ABORT/COMMIT are control.py's EndTransactionMarker)
CONTROL_SPECS = {2: "LeaderChangeMessage", 3: "SnapshotHeaderRecord", 4: "SnapshotFooterRecord",
                 5: "KRaftVersionRecord", 6: "VotersRecord"}
# alternate schema sets: the folder of internal/ that holds each, by the name a decoded object gives it
ALTERNATES = ("kafka-4.0",)
CONTROL_VERSION = 0  # ControlRecordUtils: every control value is read and written at version 0

# TransactionLogValue.TransactionStatus (int8): Kafka's TransactionState ids
TRANSACTION_STATES = {0: "Empty", 1: "Ongoing", 2: "PrepareCommit", 3: "PrepareAbort", 4: "CompleteCommit",
                      5: "CompleteAbort", 6: "Dead", 7: "PrepareEpochFence"}


class Table:
    """The specs of one kind: ``keys`` and ``values`` (coordinator kinds) or ``records`` (metadata
    kinds), each ``{apiKey: Spec}``; ``framing`` ``"coordinator"`` or ``"metadata"``; ``alternates``:
    ``{apiKey: [(schema, Spec)]}``, the values of the alternate schema sets (:data:`ALTERNATES`)."""

    __slots__ = ("kind", "framing", "keys", "values", "records", "alternates")

    def __init__(self, kind: str):
        self.kind = kind
        self.framing = FRAMING[kind]
        self.keys: dict[int, Spec] = {}
        self.values: dict[int, Spec] = {}
        self.records: dict[int, Spec] = {}
        wanted = {"coordinator-key": self.keys, "coordinator-value": self.values} if self.framing == "coordinator" \
            else {"metadata": self.records}
        folders = specs().internal()
        for folder in FOLDERS[kind]:
            for spec in folders.get(folder, ()):
                into = wanted.get(spec.kind)
                if into is not None and spec.api_key is not None:
                    into.setdefault(int(spec.api_key), spec)
        self.alternates: dict[int, list] = {}
        by_value_name = {spec.name: key for key, spec in self.values.items()}
        for schema in ALTERNATES:
            for spec in folders.get(schema, ()):
                key = by_value_name.get(spec.name)
                if key is not None:
                    self.alternates.setdefault(key, []).append((schema, spec))

    def alternate(self, name: str, schema: str) -> Spec | None:
        """The value spec ``name`` of the alternate set ``schema`` (``None`` when it has none)."""
        for specs_ in self.alternates.values():
            for sch, spec in specs_:
                if sch == schema and spec.name == name:
                    return spec
        return None


@lru_cache(maxsize=None)
def table(kind: str) -> Table:
    """The :class:`Table` of ``kind`` (one of :data:`~.kinds.KINDS`)."""
    return Table(kind)


@lru_cache(maxsize=None)
def control_spec(ctype: int) -> Spec | None:
    """The spec of a KRaft control record's value (``ControlRecordType`` 2-6), else ``None``."""
    name = CONTROL_SPECS.get(ctype)
    return None if name is None else specs().data.get(name)


@lru_cache(maxsize=1)
def by_name() -> dict:
    """Every internal spec by name -> ``(kind, role, spec)``: role ``"key"``, ``"value"``,
    ``"record"`` (metadata kinds) or ``"control"`` (kind ``"control"``, with its control type in
    place of the kind's apiKey: ``("control", ctype, spec)``)."""
    out = {}
    for kind in KINDS:
        t = table(kind)
        for role, d in (("key", t.keys), ("value", t.values), ("record", t.records)):
            for spec in d.values():
                out.setdefault(spec.name, (kind, role, spec))
    for ctype in CONTROL_SPECS:
        spec = control_spec(ctype)
        if spec is not None:
            out[spec.name] = ("control", ctype, spec)
    return out
