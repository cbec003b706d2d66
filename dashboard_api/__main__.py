"""``python -m dashboard_api``: the gateway (dashboard_api/app/main.py)."""

import sys

from dashboard_api.app.main import main

if __name__ == "__main__":
    sys.exit(main())
