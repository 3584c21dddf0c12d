from fixloop.cli import main

main()
