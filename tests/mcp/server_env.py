"""What a test's Python MCP client hands the adapter it spawns over stdio:
RUST_LOG, and the test pace of a debug build (HERDR_MCP_TEST_PACE) when
the test set one. Shared by the clients in this folder (each runs as a
script, so this folder is on its import path)."""

import os


def server_environment() -> dict[str, str]:
    """The spawned server's environment."""
    env = {"RUST_LOG": os.environ.get("RUST_LOG", "warn")}
    if "HERDR_MCP_TEST_PACE" in os.environ:
        env["HERDR_MCP_TEST_PACE"] = os.environ["HERDR_MCP_TEST_PACE"]
    return env
