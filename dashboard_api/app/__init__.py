"""The assembly of the gateway: its options, the route table, the OpenAPI document, the Tornado
application and the process's start-up. The only package that imports every other."""
