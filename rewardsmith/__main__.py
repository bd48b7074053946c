from rewardsmith.cli.main import main

raise SystemExit(main())
