"""``wireinspect spark scan INPUT... --output DIR``, and the ``spark-submit`` entry point.

    wireinspect spark scan /var/kafka-logs --output scan/             # embedded local[*] Spark
    python -m wireinspect.spark scan /var/kafka-logs --output scan/   # the same
    spark-submit --master yarn wireinspect/spark/scan.py hdfs:///archive/kafka --output hdfs:///scans/1

Under ``spark-submit`` the arguments are the same (``scan`` may be left out) and the master and
configuration are ``spark-submit``'s. See docs/spark.md for the datasets and their schemas.
"""

from __future__ import annotations

import sys

if __name__ == "__main__" and not __package__:  # spark-submit .../wireinspect/spark/scan.py
    import os

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

import click  # noqa: E402

from wireinspect.formats.kafka.internal.kinds import KINDS  # noqa: E402 - a leaf module (os, re)


def _size(text):
    from wireinspect.cliparams import parse_size

    return text if isinstance(text, int) else parse_size(text)


def _conf(ctx, param, values) -> dict:
    out = {}
    for v in values:
        k, sep, val = v.partition("=")
        if not sep or not k.strip():
            raise click.BadParameter(f"{v!r} is not KEY=VALUE")
        out[k.strip()] = val
    return out


@click.command("scan")
@click.argument("inputs", nargs=-1, required=True, metavar="INPUT...")
@click.option("-o", "--output", required=True, metavar="DIR",
              help="Where to write the records/, problems/ and files/ Parquet datasets (a path or URI).")
@click.option("--master", metavar="URL", help="Spark master (default: local[*], or spark-submit's).")
@click.option("--conf", "conf", multiple=True, callback=_conf, metavar="KEY=VALUE",
              help="Spark configuration, as spark-submit --conf (repeatable).")
@click.option("--format", "fmt", metavar="ID", help="Force the format (see 'wireinspect formats').")
@click.option("--max-decompressed", default="64M", show_default=True, metavar="SIZE",
              help="Most bytes one compressed batch may decompress to (decompression bomb guard).")
@click.option("--max-batch", default="64M", show_default=True, metavar="SIZE",
              help="Largest entry decoded in memory; larger ones get header and CRC checks only.")
@click.option("--in-memory-limit", default="64M", show_default=True, metavar="SIZE",
              help="Remote (URI) files up to this size are read whole by Spark; larger ones are streamed.")
@click.option("--records-as", "records_as", type=click.Choice((*KINDS, "none")), default=None,
              help="Kafka logs: decode record keys and values as this internal topic's (their problems are "
                   "rows of DIR/problems); none: never. Default: from the partition directory's name.")
@click.option("--overwrite", is_flag=True, help="Replace the datasets if DIR already holds them.")
@click.option("--headers-only", is_flag=True, help="One records row per batch (Kafka segments and captures, Kafka "
              "0.7/Jafka logs) with the record columns empty: batch headers without decoding records.")
@click.option("--ship-env/--no-ship-env", default=True, show_default=True,
              help="On a cluster (a master that is not local), send wireinspect and its dependencies, packed "
                   "from this Python's environment, to the executors; --no-ship-env when their Python has them.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar on stderr (there is one only on a terminal).")
def scan(inputs, output, master, conf, fmt, max_decompressed, max_batch, in_memory_limit, records_as, overwrite,
         headers_only, ship_env, quiet):
    """Decode every INPUT on Spark into Parquet: DIR/records (one row per record), DIR/problems (one
    row per problem), DIR/files (one row per file).

    INPUT is a file, a directory (walked recursively), a glob, PATH:FORMAT, or a URI Hadoop reads
    (hdfs://, s3a://, file://...). Exit status: 0 clean, 1 problems found in the data, 2 usage
    error or unreadable input, 3 the Spark job failed.

    \b
    Examples:
      wireinspect spark scan /var/lib/kafka/data --output scan/
      wireinspect spark scan 'archive/*/' --output scan/ --master 'local[2]' --headers-only
      spark-submit --master yarn wireinspect/spark/scan.py hdfs:///archive/kafka --output hdfs:///scans/1
    """
    from wireinspect.formats.options import Options
    from wireinspect.spark.job import ScanConfig, run_scan

    try:
        opts = Options(max_decompressed=_size(max_decompressed), max_batch=_size(max_batch), records_as=records_as,
                       headers_only=headers_only)
        limit = _size(in_memory_limit)
    except click.BadParameter as e:
        raise click.UsageError(str(e)) from None
    cfg = ScanConfig(inputs=tuple(inputs), output=output.rstrip("/") or "/", master=master, conf=conf,
                     forced=fmt, opts=opts, in_memory_limit=limit, overwrite=overwrite, quiet=quiet,
                     ship_env=ship_env)
    sys.exit(run_scan(cfg))


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def spark():
    """Scan many inputs into Parquet on Apache Spark."""


spark.add_command(scan)


def main(argv=None):
    """``python -m wireinspect.spark`` and ``spark-submit .../scan.py``: ``scan`` may be omitted."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] != ["scan"] and args[:1] not in (["-h"], ["--help"]):
        args.insert(0, "scan")
    try:
        spark.main(args, prog_name="wireinspect spark")
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
