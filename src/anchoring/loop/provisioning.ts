/**
 * Provisioning, at each of the leader's passes (anchorer.ts's header says what it guarantees):
 * an organisation that holds the add-on and has no topic gets a `topic_create` row; one with a
 * topic whose current key has no live announcement gets its key announcement queued, a person
 * whose key has no announcement naming the current seal key theirs, and a key declared
 * compromised its key-compromise message.
 */
import type { LoopContext } from "./context.ts";
import type { StateChanges } from "./state-changes.ts";

export function createProvisioning(ctx: LoopContext, changes: StateChanges) {
  const { journal, errors } = ctx;
  const { event, announcementFor } = changes;

  const provision = async () => {
    const wanting = await journal.organisationsWantingTopic();
    if (wanting.length === 0) return;
    if ((await ctx.submitKey()) === null) {
      errors.warn("sealed", "key store sealed: organisation topics cannot be created until the master key is available", { organisations: wanting.length });
      return;
    }
    for (const orgId of wanting) {
      const row = await journal.queueTopicCreate(orgId);
      if (row !== null) event("queued", row);
    }
  };

  /**
   * Organisations with a topic whose current key has no live announcement get one (topics that
   * predate announcements, a new key); keys declared compromised get their one `key_compromise`
   * message (docs/signing.md "Key lifecycle").
   */
  const announce = async () => {
    const compromiseMessageFor = ctx.compromiseMessageFor;
    if (compromiseMessageFor !== null) {
      for (const key of await journal.keysWantingCompromiseMessage()) {
        const row = await journal.queueCompromise(key, compromiseMessageFor(key));
        if (row !== null) event("queued", row, { topicId: row.topicId });
      }
    }
    for (const orgId of await journal.organisationsWantingAnnouncement()) {
      const a = await announcementFor(orgId);
      if (a === null) continue;
      const row = await journal.queueAnnouncement(orgId, a);
      if (row !== null) event("queued", row, { topicId: row.topicId });
    }
    // A person's new key (re-enrolment) or a new seal key: the person's key announced again.
    const personAnnouncementFor = ctx.personAnnouncementFor;
    if (personAnnouncementFor !== null) {
      for (const personId of await journal.personsWantingAnnouncement()) {
        const a = await personAnnouncementFor(personId);
        if (a === null) continue;
        const row = await journal.queuePersonAnnouncement(personId, a);
        if (row !== null) event("queued", row, { topicId: row.topicId });
      }
    }
  };

  return { provision, announce };
}
