"""``python -m wireinspect.spark scan INPUT... --output DIR`` (``scan`` may be left out)."""

from wireinspect.spark.scan import main

main()
