"""Where rewards run beyond one process: the reward server, Ray, and the ``remote`` reward."""
