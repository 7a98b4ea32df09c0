"""Resume one paused thread of a SQLite file in this (fresh) process; print timings as JSON.

``python -m benchmarks.resume_child SYSTEM DB_PATH THREAD_ID``. Phases: ``import_ms`` (the
modules the system needs), ``setup_ms`` (open the saver, build the agent), ``invoke_ms`` (the
resume call). ``resume_ms`` = setup + invoke: everything after the imports.
"""

from __future__ import annotations

import time

_T0 = time.perf_counter()

import json  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import cast  # noqa: E402


def main(argv: list[str]) -> int:
    name, db, thread_id = argv
    from benchmarks import savers, systems

    system_name = cast(systems.VariantName, name)
    systems.import_system(system_name)
    t1 = time.perf_counter()
    saver = savers.sqlite_saver(Path(db))
    system = systems.build(system_name, saver, script=systems.Script(steps=0, approval=True))
    t2 = time.perf_counter()
    outcome = system.resume(thread_id)
    t3 = time.perf_counter()
    saver.conn.close()
    transfers = [o for o in outcome.observations if o.startswith("transferred")]
    ok = outcome.answer == systems.ANSWER and transfers == [f"transferred 120: {systems.DECISION}"]
    print(
        json.dumps(
            {
                "import_ms": (t1 - _T0) * 1000,
                "setup_ms": (t2 - t1) * 1000,
                "invoke_ms": (t3 - t2) * 1000,
                "resume_ms": (t3 - t1) * 1000,
                "ok": ok,
                "observations": outcome.observations[-2:],
            }
        )
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
