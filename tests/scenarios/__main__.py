from tests.scenarios import main

main()
