"""Every frame of a capture gets a direction, even when its connection has no handshake."""

import json

from click.testing import CliRunner

from wireinspect.cli import cli


def test_no_handshake_connection_frames_have_directions(external):
    r = CliRunner().invoke(cli, ["dump", "--json", str(external / "rocketmq" / "producer.pcap")])
    dirs = [d.get("direction") for d in map(json.loads, r.stdout.splitlines()) if d["type"] != "capture_summary"]
    assert dirs and set(dirs) == {"request", "response"}
