"""Every command's --help names its options and shows examples (issue 14, item 7)."""

import pytest
from click.testing import CliRunner

from wireinspect.cli import cli


@pytest.mark.parametrize("command,options", [
    (["dump"], ["--headers-only", "--schemas", "--quiet", "--summary", "--offset"]),
    (["verify"], ["--deep", "--quiet"]),
    (["recover"], ["--salvage", "--quiet"]),
    (["encode"], ["--keep-crc"]),
    (["spark", "scan"], ["--headers-only", "--quiet"]),
])
def test_help_has_examples_and_the_new_options(command, options):
    r = CliRunner().invoke(cli, [*command, "--help"])
    assert r.exit_code == 0
    assert "Examples:" in r.stdout
    for opt in options:
        assert opt in r.stdout, opt


@pytest.mark.parametrize("command", ["group-offsets", "transactions", "metadata"])
def test_reports_help_has_sample_examples_and_no_rocketmq_option(command):
    """The reports read Kafka's internal topics: examples that run on the bundled samples, and no
    RocketMQ-only --commitlog in their help (issue 20, item 16e); the other commands keep it."""
    r = CliRunner().invoke(cli, [command, "--help"])
    assert r.exit_code == 0
    assert "Examples:" in r.stdout and "samples/internal/" in r.stdout
    assert "--commitlog" not in r.stdout and "RocketMQ" not in r.stdout
    assert "--max-batch-records" in r.stdout and "--quiet" in r.stdout
    r = CliRunner().invoke(cli, [command, "--commitlog", "/tmp", "x"])
    assert r.exit_code == 2 and "--commitlog" in r.output
    assert "--commitlog" in CliRunner().invoke(cli, ["verify", "--help"]).stdout


@pytest.mark.parametrize("command", ["group-offsets", "transactions", "metadata"])
def test_reports_help_examples_run_on_the_samples(command, monkeypatch):
    """Each sample example of a report's --help runs (exit 0, or 1 for the hanging transaction)."""
    import shlex

    from tests.conftest import ROOT

    monkeypatch.chdir(ROOT)
    text = CliRunner().invoke(cli, [command, "--help"]).stdout
    lines = [ln.strip() for ln in text.splitlines() if ln.strip().startswith("wireinspect ") and "samples/" in ln]
    assert lines
    for line in lines:
        r = CliRunner().invoke(cli, shlex.split(line)[1:])
        assert r.exit_code in (0, 1) and r.stdout.strip(), (line, r.output)
        assert r.exit_code == (1 if command == "transactions" else 0), (line, r.output)
