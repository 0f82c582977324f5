"""Pure data of Hansa: models, enums and state machines. No I/O lives here."""
