"""What a run would send and cost, before it runs (`--dry-run`, `--max-cost`): the same selection, renderer and
prompt builders as the run, the playbook as it is now; nothing is written and no model is called."""

from __future__ import annotations

from core.budget import budget_use
from core.curator import curator_request
from core.errors import BudgetError
from core.estimate import Estimate, estimate_cost
from core.models import Playbook, ReflectorOutput
from core.reflector import reflector_request
from core.sections import DEFAULT_SECTIONS
from core.selection import SessionFilter, choose
from core.store.ledger import pending_sessions
from core.store.registry import playbook_names, sections_of
from core.store.sessions import load_messages
from core.store.versions import load_version
from core.tokens import estimate_tokens
from flows.models.providers import ProviderSpec
from flows.run.steps import template_for
from flows.workspace import Workspace

__all__ = ["estimate_run"]


def estimate_run(
    ws: Workspace,
    playbook: str,
    spec: ProviderSpec,
    chosen: SessionFilter | None = None,
    *,
    per_call: int = 600,
) -> Estimate:
    """What curating `playbook`'s pending sessions would send and cost, from the same renderer and prompt
    builders as a run (the playbook as it is now); nothing is written and no model is called."""
    chosen = chosen or SessionFilter()
    db = ws.database(playbook)
    config = ws.run_config(playbook, spec)
    shapes: dict[str, list[tuple[int, int]]] = {"reflector": [], "curator": []}
    ids: list[str] = []
    with db.open(create=False) as con:  # an estimate creates nothing
        exists = playbook in playbook_names(con)
        current = load_version(con, playbook) if exists else Playbook(sections={})
        sections = sections_of(con, playbook) if exists else DEFAULT_SECTIONS
        reflector = template_for(config, "reflector")
        curator = template_for(config, "curator")
        reflection = ReflectorOutput(analysis="x " * (per_call * 2))  # about `per_call` tokens of findings
        taken, _ = choose(
            pending_sessions(con, playbook, chosen, idle_minutes=config.idle_minutes),
            scope=config.scope,
            min_messages=config.min_messages,
            consent=config.consent,
        )
        for row in taken:
            sid = row.session_id
            try:
                ask, _ = reflector_request(
                    reflector,
                    load_messages(con, sid),
                    current,
                    sections,
                    budget_tokens=config.limits.max_input_tokens,
                    redactor=config.redactor,
                    model=spec.reflector_model,
                    session_id=sid,
                )
            except BudgetError:
                continue  # a run refuses it before any call: it costs nothing
            asks = (
                ask,
                curator_request(
                    curator,
                    reflection,
                    current,
                    sections,
                    model=spec.curator_model,
                    session_id=sid,
                    budget=budget_use(current, config.budget),
                ),
            )
            for step, request in zip(("reflector", "curator"), asks, strict=True):
                shapes[step].append((estimate_tokens(request.system), estimate_tokens(request.user)))
            ids.append(sid)
    return estimate_cost(
        ids,
        [(spec.reflector_model, shapes["reflector"]), (spec.curator_model, shapes["curator"])],
        epoch_size=chosen.epoch_size or config.epoch_size,
        per_call=per_call,
        prices=ws.settings.prices,
        local=ws.settings.local_server(spec.local),
    )
