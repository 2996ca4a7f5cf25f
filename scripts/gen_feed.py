"""Thin shell over ais_pipeline.tools (see the module there)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ais_pipeline.tools.gen_feed import main

if __name__ == "__main__":
    sys.exit(main())
