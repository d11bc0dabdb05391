"""Agent directory, sessions root and encoded-cwd directory names (session-format §1)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from xcsh.coding.paths import agent_dir, config_root, encode_cwd, project_sessions_dir, sessions_root


def test_agent_dir_comes_from_pi_coding_agent_dir(tmp_path: Path) -> None:
    env = {"PI_CODING_AGENT_DIR": str(tmp_path / "agent"), "HOME": str(tmp_path / "home")}
    assert agent_dir(env) == tmp_path / "agent"
    assert sessions_root(env) == tmp_path / "agent" / "sessions"


def test_agent_dir_defaults_to_the_config_dir_under_home(tmp_path: Path) -> None:
    assert agent_dir({"HOME": str(tmp_path)}) == tmp_path / ".xcsh" / "agent"
    assert agent_dir({"HOME": str(tmp_path), "PI_CONFIG_DIR": ".other"}) == tmp_path / ".other" / "agent"
    assert config_root({"HOME": str(tmp_path)}) == tmp_path / ".xcsh"


@pytest.mark.skipif(sys.platform not in ("linux", "darwin"), reason="XDG layout is Linux/macOS only")
def test_existing_xdg_data_dir_holds_sessions_for_the_default_profile_only(tmp_path: Path) -> None:
    xdg = tmp_path / "xdg"
    env = {"HOME": str(tmp_path / "home"), "XDG_DATA_HOME": str(xdg)}
    assert sessions_root(env) == tmp_path / "home" / ".xcsh" / "agent" / "sessions"  # not created yet
    (xdg / "xcsh").mkdir(parents=True)
    assert sessions_root(env) == xdg / "xcsh" / "sessions"
    assert agent_dir(env) == tmp_path / "home" / ".xcsh" / "agent"  # config stays in the agent dir
    custom = {**env, "PI_CODING_AGENT_DIR": str(tmp_path / "profile")}
    assert sessions_root(custom) == tmp_path / "profile" / "sessions"


def test_cwd_inside_home_is_dash_plus_relative_path(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "src" / "app").mkdir(parents=True)
    assert encode_cwd(home / "src" / "app", home=home, temp_root=tmp_path / "t") == "-src-app"
    assert encode_cwd(home, home=home, temp_root=tmp_path / "t") == "-"


def test_cwd_inside_temp_is_dash_tmp_plus_relative_path(tmp_path: Path) -> None:
    temp = tmp_path / "tmp"
    (temp / "work" / "x").mkdir(parents=True)
    assert encode_cwd(temp / "work" / "x", home=tmp_path / "h", temp_root=temp) == "-tmp-work-x"
    assert encode_cwd(temp, home=tmp_path / "h", temp_root=temp) == "-tmp"


def test_cwd_elsewhere_is_the_absolute_path_between_double_dashes(tmp_path: Path) -> None:
    target = tmp_path / "srv" / "app"
    target.mkdir(parents=True)
    name = encode_cwd(target, home=tmp_path / "h", temp_root=tmp_path / "t")
    assert name == "--" + str(target.resolve()).lstrip("/").replace("/", "-") + "--"


def test_colons_and_symlinks_are_resolved_before_encoding(tmp_path: Path) -> None:
    home = tmp_path / "home"
    real = home / "a:b" / "c"
    real.mkdir(parents=True)
    link = home / "link"
    link.symlink_to(real)
    assert encode_cwd(link, home=home, temp_root=tmp_path / "t") == "-a-b-c"


def test_project_sessions_dir_joins_root_and_encoded_cwd(tmp_path: Path) -> None:
    home = tmp_path / "home"
    project = home / "proj"
    project.mkdir(parents=True)
    env = {"HOME": str(home), "PI_CODING_AGENT_DIR": str(tmp_path / "agent")}
    assert project_sessions_dir(project, env) == tmp_path / "agent" / "sessions" / "-proj"
