-- A change to platform_config, through the API or written by hand, notifies every instance (LISTEN svc_config),
-- which re-reads its settings at once; the poll only backs the notification up (decisions "Issue 36: idle,
-- the minute sweeps").
CREATE OR REPLACE FUNCTION svc_platform_config_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('svc_config', '');
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER platform_config_notify AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON platform_config
  FOR EACH STATEMENT EXECUTE FUNCTION svc_platform_config_notify();
