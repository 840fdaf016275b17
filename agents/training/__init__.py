"""Training runs: configs, the training env, SB3 runs, behaviour cloning and DAgger.

``train.train(TrainConfig(...))`` is ``soko train`` (``cli``); ``config`` holds the config
dataclasses, ``env`` the training vector env, ``tracker`` a run's checkpoints and
evaluations, ``bc`` behaviour cloning, ``dagger`` and ``labels`` DAgger with a planner as the
expert, ``learning_curve`` the figure. RLlib's PPO is ``agents.rllib``.
"""
