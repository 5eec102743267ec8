"""wo's Chinese-English SMT model (wo smt translate): synthesis model, phrase table, lexicons, LM, truecaser and spaCy parsers.

Data only: wo finds this directory through the ``wo.models`` entry point
(:func:`wo.resources.model_dirs`); ``wo models`` lists its models.  Licence: Tatoeba (CC BY 2.0 FR); non-commercial (Brown LM, Chinese parser's UD Chinese 1.3 / Beginner data).
"""
