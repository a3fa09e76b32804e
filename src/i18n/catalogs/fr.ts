import { translation } from '../translation.js';

// French typography: a no-break space (U+00A0) before a colon, a narrow one (U+202F) before a semicolon.

/** The French messages. */
export const fr = translation({
  'handback.pending': 'En attente de la décision d’une personne.',
  'handback.declined': 'Une personne a refusé la proposition.',
  'handback.declined_note': 'Une personne a refusé la proposition\u00a0: {note}',
  'handback.superseded': 'Un opérateur l’a modifiée\u202f; la nouvelle proposition est {next}.',
  'handback.expired': 'La proposition a expiré avant que quiconque l’approuve.',
  'handback.executing': 'La proposition est en cours d’exécution.',
  'handback.approved_executing':
    'Approuvée par une personne\u202f; l’application est en train de l’exécuter.',
  'handback.granted_executing':
    'Approuvée par une autorisation permanente\u202f; l’application est en train de l’exécuter.',
  'handback.approved_executed': 'Approuvée par une personne\u202f; l’application l’a exécutée.',
  'handback.granted_executed': 'Approuvée par une autorisation permanente\u202f; l’application l’a exécutée.',
  'handback.approved_not_executed': 'Approuvée par une personne\u202f; l’application ne l’a pas exécutée.',
  'handback.granted_not_executed':
    'Approuvée par une autorisation permanente\u202f; l’application ne l’a pas exécutée.',
  'handback.none': 'Aucune proposition dans cette exécution pour l’instant.',
  'handback.line': '- {operation} {proposalId} ({short})\u00a0: {status}. {text}',
  'handback.intro':
    'Ce que sont devenues les propositions faites plus tôt (rapporté par l’application, jamais par un modèle)\u00a0:',
  'outcome.succeeded': 'L’opération approuvée a réussi.',
  'outcome.succeeded_ids': 'L’opération approuvée a réussi ({identifiers}).',
  'outcome.needs_reconciliation':
    'Le prestataire n’a pas confirmé l’opération\u202f; elle est en cours de rapprochement. Ne la relancez pas.',
  'outcome.revision_required':
    'L’opération n’a pas été exécutée\u00a0: {reason} Une nouvelle proposition est nécessaire.',
  'outcome.terminal_failure':
    'L’opération a échoué et ne sera pas relancée (identifiant de corrélation {correlationId}).',
  'status.pending': 'en attente',
  'status.executing': 'en cours d’exécution',
  'status.succeeded': 'réussie',
  'status.needs_reconciliation': 'rapprochement nécessaire',
  'status.revision_required': 'révision nécessaire',
  'status.terminal_failure': 'échec définitif',
  'status.declined': 'refusée',
  'status.superseded': 'remplacée',
  'status.expired': 'expirée',
});
