"""``python -m cardarena.locm.cli`` runs ``locm``."""

import sys

from .main import main

sys.exit(main())
