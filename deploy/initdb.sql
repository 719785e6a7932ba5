-- Each service owns its own database on the shared server (separate servers work the same way:
-- point CASE_DATABASE_URL / ORCH_DATABASE_URL at them).
CREATE DATABASE "case";
CREATE DATABASE orch;
