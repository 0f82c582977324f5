"""The command line never prints the database password (review H2)."""

from __future__ import annotations

import subprocess
import sys

from pg import fresh_schema

PASSWORD = "canary-db-5e81"


def test_migrate_prints_the_database_url_without_its_password() -> None:
    with fresh_schema() as url:
        # the test server trusts local connections: any password is accepted and ignored
        scheme, _, rest = url.partition("://")
        user, _, host = rest.partition("@")
        with_password = f"{scheme}://{user}:{PASSWORD}@{host}"
        result = subprocess.run(
            [sys.executable, "-m", "hansa", "migrate", "--database-url", with_password],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert result.returncode == 0, result.stdout + result.stderr
    printed = "".join(result.stdout.split())  # rich wraps long lines
    assert printed.startswith("migratedpostgresql://") and ":***@" in printed
    assert PASSWORD not in result.stdout + result.stderr
