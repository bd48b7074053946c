"""SandboxFusion's HTTP API: the wire format (:mod:`.wire`), a client backend (:mod:`.client`) and a server
(:mod:`.server`) that puts any rewardsmith backend behind the same API."""
