from rewardkit.cli import main

raise SystemExit(main())
