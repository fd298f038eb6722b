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
