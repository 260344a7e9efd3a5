from specguard.cli.main import run

run()
