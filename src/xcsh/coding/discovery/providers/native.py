"""xcsh's own files: ``<agent dir>/`` (user) and the project's ``.xcsh/`` (project)."""

from __future__ import annotations

from pathlib import Path

from xcsh.coding.discovery.base import (
    AgentDir,
    CommandFile,
    Found,
    Level,
    LoadContext,
    ancestors,
    command_files,
    context_file,
    non_empty_dir,
    read_text,
    rule_files,
    scan_skills,
    source,
    system_prompt_file,
)
from xcsh.coding.discovery.providers.base import Provider
from xcsh.coding.discovery.walk import files_below, kind_of

PROJECT_DIR = ".xcsh"
# the agent dir also accepts the cross-agent names xcsh read before XCSH.md existed
USER_CONTEXT_NAMES = ("XCSH.md", "AGENTS.md", "CLAUDE.md")


class NativeProvider(Provider):
    id = "native"
    name = "xcsh"
    priority = 100
    description = "xcsh configuration in the agent dir (~/.xcsh/agent) and the project's .xcsh/"

    def load(self, ctx: LoadContext) -> Found:
        found = Found()
        config_dirs = self._config_dirs(ctx)
        nearest = self._nearest_project_dir(ctx)
        for file_name in USER_CONTEXT_NAMES:
            item = context_file(self.id, self.name, ctx.agent_dir / file_name, "user", None)
            if item is not None:
                found.context_files.append(item)
                break
        if nearest is not None:
            directory, depth = nearest
            item = context_file(self.id, self.name, directory / "XCSH.md", "project", depth)
            if item is not None:
                found.context_files.append(item)
        user_prompt = system_prompt_file(self.id, self.name, ctx.agent_dir / "SYSTEM.md", "user")
        if user_prompt is not None:
            found.system_prompts.append(user_prompt)
        if nearest is not None:
            project_prompt = system_prompt_file(self.id, self.name, nearest[0] / "SYSTEM.md", "project")
            if project_prompt is not None:
                found.system_prompts.append(project_prompt)
        for directory, _ in ancestors(ctx.cwd, ctx.walk_stop):
            found.skills += scan_skills(
                self.id, self.name, directory / PROJECT_DIR / "skills", "project", require_description=True
            )
        found.skills += scan_skills(
            self.id, self.name, ctx.agent_dir / "skills", "user", require_description=True
        )
        for directory, level in config_dirs:
            found.commands += command_files(self.id, self.name, directory / "commands", level)
            found.rules += rule_files(self.id, self.name, directory / "rules", level)
        # prompt templates: user templates first, as the reference's template loader has it
        for directory, level in reversed(config_dirs):
            found.prompts += self._templates(directory / "prompts", level)
        found.agent_dirs += self._agent_dirs(ctx)
        return found

    def _config_dirs(self, ctx: LoadContext) -> list[tuple[Path, Level]]:
        dirs: list[tuple[Path, Level]] = []
        if non_empty_dir(ctx.cwd / PROJECT_DIR):
            dirs.append((ctx.cwd / PROJECT_DIR, "project"))
        if non_empty_dir(ctx.agent_dir):
            dirs.append((ctx.agent_dir, "user"))
        return dirs

    def _nearest_project_dir(self, ctx: LoadContext) -> tuple[Path, int] | None:
        for directory, depth in ancestors(ctx.cwd, ctx.repo_root):
            if directory == ctx.home:
                break  # ~/.xcsh is the user's configuration, not a project's
            if non_empty_dir(directory / PROJECT_DIR):
                return directory / PROJECT_DIR, depth
        return None

    def _templates(self, directory: Path, level: Level) -> list[CommandFile]:
        templates: list[CommandFile] = []
        for path, group in files_below(directory, ".md"):
            text = read_text(path, level)
            if text is None:
                continue
            where = source(self.id, self.name, path, level)
            templates.append(
                CommandFile(
                    name=path.name.removesuffix(".md"),
                    path=where.path,
                    content=text,
                    level=level,
                    source=where,
                    group=group,
                )
            )
        return templates

    def _agent_dirs(self, ctx: LoadContext) -> list[AgentDir]:
        dirs: list[AgentDir] = []
        for directory, _ in ancestors(ctx.cwd, None):
            candidate = directory / PROJECT_DIR / "agents"
            if directory != ctx.home and kind_of(candidate) == "dir":
                dirs.append(
                    AgentDir(str(candidate), "project", source(self.id, self.name, candidate, "project"))
                )
                break
        user = ctx.agent_dir / "agents"
        if kind_of(user) == "dir":
            dirs.append(AgentDir(str(user), "user", source(self.id, self.name, user, "user")))
        return dirs
