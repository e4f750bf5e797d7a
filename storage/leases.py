"""Run leases: which worker drives a running run, and until when it is presumed alive.

Renewing a lease does not make a new version of the run, so the holder's next save
still succeeds; anybody else's renewal is refused.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import update

from storage.run_rows import load_state
from storage.sql import SqlStore, rowcount
from storage.tables import RunRow


class SqlLeases(SqlStore):
    """The `renew_lease` part of `agent.ports.RunStore`."""

    async def renew_lease(self, run_id: str, worker: str, until: datetime) -> bool:
        """Extend `worker`'s lease to `until`; False once the run is not that worker's
        (taken over, paused, finished) or does not exist."""
        async with self._sessions.begin() as session:
            state = await load_state(session, run_id, lock=True)
            if state is None or state.worker != worker or not state.status.is_active:
                return False
            state.lease_expires_at = until
            result = await session.execute(
                update(RunRow)
                .where(RunRow.run_id == run_id, RunRow.version == state.version)
                .values(lease_expires_at=until, state_json=state.model_dump_json())
                .execution_options(synchronize_session=False)
            )
            return rowcount(result) == 1
