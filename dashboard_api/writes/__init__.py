"""What changes a cluster, before it is sent: what a route's ``{kind}`` names, patches, drain
plans, application deployment, name rules, and read-change-write with retries."""
