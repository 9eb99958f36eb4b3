CREATE SEQUENCE "public"."admin_action_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1;--> statement-breakpoint
CREATE SEQUENCE "public"."wallet_entry_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1;--> statement-breakpoint
CREATE TABLE "admin_actions" (
	"id" text PRIMARY KEY DEFAULT 'act_' || nextval('admin_action_seq') NOT NULL,
	"action" text NOT NULL,
	"target" text,
	"params" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"request_id" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "platform_config" (
	"key" text PRIMARY KEY NOT NULL,
	"value" jsonb NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "wallet_entries" (
	"id" text PRIMARY KEY DEFAULT 'wal_' || nextval('wallet_entry_seq') NOT NULL,
	"account_id" text NOT NULL,
	"amount" numeric(12, 4) NOT NULL,
	"currency_code" text NOT NULL,
	"kind" text NOT NULL,
	"reason" text NOT NULL,
	"balance_after" numeric(12, 4) NOT NULL,
	"source" text,
	"request_id" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "agents" ADD COLUMN "paused_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "partner_id" text;--> statement-breakpoint
ALTER TABLE "wallet_entries" ADD CONSTRAINT "wallet_entries_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "admin_actions_created_idx" ON "admin_actions" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "wallet_entries_account_idx" ON "wallet_entries" USING btree ("account_id","created_at","id");--> statement-breakpoint
CREATE INDEX "users_partner_idx" ON "users" USING btree ("partner_id","created_at","id") WHERE partner_id IS NOT NULL;--> statement-breakpoint
-- The wallet becomes a ledger: an account's existing balance is its opening entry, so the sum of the
-- entries equals subscriptions.wallet_balance from the first moment.
INSERT INTO "wallet_entries" ("account_id", "amount", "currency_code", "kind", "reason", "balance_after", "source")
SELECT s."account_id", s."wallet_balance", coalesce((SELECT u."currency_code" FROM "users" u WHERE u."account_id" = s."account_id" ORDER BY u."created_at" LIMIT 1), 'USD'),
       'adjustment', 'Opening balance', s."wallet_balance", 'opening'
FROM "subscriptions" s WHERE s."wallet_balance" <> 0;
