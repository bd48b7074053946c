"""NeMo Gym 0.7.0's own ``equivalence_rule`` resources server (exact match of the answer text), served on a port.

Runs with the Python of the NeMo Gym environment: ``python nemo_gym_server.py PORT``. The server class, its config,
its FastAPI app (``setup_webserver``: ``/verify`` wrapped in NeMo Gym's judge failsafe) are NeMo Gym's; the server
client it is given is never called by this server's ``verify`` (NeMo Gym's own tests build it the same way).
"""

from __future__ import annotations

import sys
from unittest.mock import MagicMock

import uvicorn
from nemo_gym.server_utils import ServerClient
from resources_servers.equivalence_rule.app import (
    EquivalenceRuleResourcesServer,
    EquivalenceRuleResourcesServerConfig,
)

if __name__ == "__main__":
    port = int(sys.argv[1])
    config = EquivalenceRuleResourcesServerConfig(host="127.0.0.1", port=port, entrypoint="", name="equivalence_rule")
    server = EquivalenceRuleResourcesServer(config=config, server_client=MagicMock(spec=ServerClient))
    uvicorn.run(server.setup_webserver(), host="127.0.0.1", port=port, log_level="warning")
