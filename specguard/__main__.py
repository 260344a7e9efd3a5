from specguard.cli.main import app

app(prog_name="specguard")
