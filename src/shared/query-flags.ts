/** Query flags (showdeleted, showhistory, allowStub): only the exact string `true` turns one on. */
export const isOn = (value: unknown): boolean => value === 'true';
