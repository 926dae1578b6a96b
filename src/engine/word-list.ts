/**
 * The fixed pieces generated tokens are drawn from, so engine output decodes to readable text
 * and re-encodes to the very same ids (an agent that sends the assistant turn back shares its
 * prefix with the KV the engine computed). Every entry is one tokenizer piece: a space plus at
 * most four ASCII letters, or one punctuation / newline character. Ids are the array indices.
 */
export const WORD_PIECES: readonly string[] = [
  "\n",
  ".",
  ",",
  ":",
  ";",
  "?",
  "!",
  "-",
  "(",
  ")",
  ...(
    "the of and to in is it for on with as was at by be this that from or an are not but " +
    "have has had can will all if one two new more some any so do we you they he she his " +
    "her our its my me us them who what when then than also only into over out up down off " +
    "here just like make made use used each file line code test run call path data list " +
    "type name key map set get put add read load save open send task step plan goal next " +
    "last time day way part case fact idea view form rule note text word page item node " +
    "edge tree root leaf user host port disk copy move find fix bug log sort hash sum max " +
    "min size len arg args env var val ok true null none void main init exit wait done " +
    "fail pass good well very much many most few less best old big low high fast slow " +
    "left top end stop keep need want try see look show tell ask give take " +
    "come go work help mean seem feel turn hold back long full safe free soon " +
    "yet now why how"
  )
    .split(" ")
    .map((w) => ` ${w}`),
];
