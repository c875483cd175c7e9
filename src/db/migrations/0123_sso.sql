-- Single sign-on (issue 54): the OpenID Connect identity a user is linked to, the issuer and
-- its `sub` claim (stable at the provider, unlike an email). Linked at the first SSO sign-in,
-- by email for an existing user; afterwards the subject alone finds the user, and another
-- subject bearing the same email is refused.
ALTER TABLE users ADD COLUMN sso_issuer text;
ALTER TABLE users ADD COLUMN sso_subject text;
ALTER TABLE users ADD CONSTRAINT users_sso_pair CHECK ((sso_issuer IS NULL) = (sso_subject IS NULL));
CREATE UNIQUE INDEX users_sso ON users (sso_issuer, sso_subject) WHERE sso_subject IS NOT NULL;
