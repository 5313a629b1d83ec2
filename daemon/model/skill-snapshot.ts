/** A skill folder's files read at one moment: relative path → bytes. A job is created with such a snapshot of its skill, which later edits never reach. */
export type SkillFiles = ReadonlyMap<string, Buffer>;
