ALTER TABLE "login_links" ADD COLUMN "scopes" jsonb;--> statement-breakpoint
ALTER TABLE "login_links" ADD COLUMN "ip_allowlist" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "scopes" jsonb;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "ip_allowlist" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
-- Links issued before the ceiling existed carry none and would open an all-scope session: end them (they live 15 minutes anyway).
UPDATE "login_links" SET "expires_at" = now() WHERE "used_at" IS NULL AND "expires_at" > now();
