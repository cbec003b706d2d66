"""What every handler may reach: the options and the long-lived services of the process."""


class Context:
    def __init__(self, options, cluster, telemetry, csrf=None):
        self.options = options
        self.cluster = cluster
        self.telemetry = telemetry
        self.csrf = csrf
