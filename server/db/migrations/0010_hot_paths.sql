ALTER TABLE "agents" ADD COLUMN "revision" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
-- Cache invalidation from the rows themselves (server/db/bus.ts): every change that can alter how a
-- request is authenticated or billed tells every instance listening on svc_invalidate, whoever wrote it.
CREATE OR REPLACE FUNCTION svc_invalidate(tags text[]) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('svc_invalidate', json_build_object('i', 'db', 't', tags)::text);
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION svc_invalidate_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'api_keys' THEN PERFORM svc_invalidate(ARRAY['key:' || OLD.id]);
  ELSIF TG_TABLE_NAME = 'users' THEN PERFORM svc_invalidate(ARRAY['user:' || OLD.id, 'acc:' || OLD.account_id]);
  ELSIF TG_TABLE_NAME = 'accounts' THEN PERFORM svc_invalidate(ARRAY['acc:' || OLD.id]);
  ELSIF TG_TABLE_NAME = 'subscriptions' THEN PERFORM svc_invalidate(ARRAY['acc:' || OLD.account_id]);
  ELSIF TG_TABLE_NAME = 'oauth_grants' THEN PERFORM svc_invalidate(ARRAY['grant:' || OLD.id]);
  ELSIF TG_TABLE_NAME = 'oauth_tokens' THEN PERFORM svc_invalidate(ARRAY['tok:' || OLD.token_hash]);
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER api_keys_invalidate AFTER UPDATE OR DELETE ON api_keys FOR EACH ROW EXECUTE FUNCTION svc_invalidate_row();
--> statement-breakpoint
CREATE TRIGGER users_invalidate AFTER UPDATE OR DELETE ON users FOR EACH ROW EXECUTE FUNCTION svc_invalidate_row();
--> statement-breakpoint
CREATE TRIGGER accounts_invalidate AFTER UPDATE OR DELETE ON accounts FOR EACH ROW EXECUTE FUNCTION svc_invalidate_row();
--> statement-breakpoint
CREATE TRIGGER subscriptions_invalidate AFTER UPDATE OR DELETE ON subscriptions FOR EACH ROW EXECUTE FUNCTION svc_invalidate_row();
--> statement-breakpoint
-- Grants and tokens: only revocation matters (a grant's last_used_at is written every few minutes).
CREATE TRIGGER oauth_grants_invalidate AFTER UPDATE ON oauth_grants FOR EACH ROW
  WHEN (OLD.revoked_at IS DISTINCT FROM NEW.revoked_at) EXECUTE FUNCTION svc_invalidate_row();
--> statement-breakpoint
CREATE TRIGGER oauth_tokens_invalidate AFTER UPDATE ON oauth_tokens FOR EACH ROW
  WHEN (OLD.revoked_at IS DISTINCT FROM NEW.revoked_at) EXECUTE FUNCTION svc_invalidate_row();
--> statement-breakpoint
-- The agent's revision: any change of the row, and of its knowledge, moves it on, so a cached agent,
-- prompt and knowledge block (conversations/turn-context.ts) is valid exactly while it is unchanged.
CREATE OR REPLACE FUNCTION svc_agent_revision() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.revision := OLD.revision + 1;
  RETURN NEW;
END $$;
--> statement-breakpoint
CREATE TRIGGER agents_revision BEFORE UPDATE ON agents FOR EACH ROW EXECUTE FUNCTION svc_agent_revision();
--> statement-breakpoint
CREATE OR REPLACE FUNCTION svc_knowledge_revision() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN UPDATE agents SET revision = revision + 1 WHERE id = OLD.agent_id; END IF;
  IF TG_OP <> 'DELETE' AND (TG_OP = 'INSERT' OR NEW.agent_id IS DISTINCT FROM OLD.agent_id) THEN
    UPDATE agents SET revision = revision + 1 WHERE id = NEW.agent_id;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER kb_documents_revision AFTER INSERT OR UPDATE OR DELETE ON kb_documents FOR EACH ROW EXECUTE FUNCTION svc_knowledge_revision();
--> statement-breakpoint
CREATE TRIGGER kb_summaries_revision AFTER INSERT OR UPDATE OR DELETE ON kb_summaries FOR EACH ROW EXECUTE FUNCTION svc_knowledge_revision();
