from wireinspect.cli import main

main()
