from rewardkit.cli.main import main

raise SystemExit(main())
